"""The MiniTriton Lark grammar, shipped as package data (``minitriton.grammar``)."""
