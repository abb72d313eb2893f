"""NumPy block emulator for MiniTriton IR (installed as ``minitriton.emulator``)."""
