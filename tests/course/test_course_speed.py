"""Exercise 18's speed report: the floor relative to the reference, and the GPU run."""

from __future__ import annotations

import json

import pytest

from minitriton.cli import main
from minitriton.course import catalog
from minitriton.course.speed import speed_case, speed_table

FLOOR = catalog.find_exercise("18").spec.SPEED["floor"]


def test_a_kernel_at_the_floor_passes_and_one_below_fails() -> None:
    ref = {"tflops": 200.0, "ms": 0.7}
    at = speed_case({"tflops": 200.0 * FLOOR, "ms": 1.4}, ref, FLOOR)
    below = speed_case({"tflops": 200.0 * FLOOR * 0.9, "ms": 1.6}, ref, FLOOR)
    assert at.passed and f"{FLOOR:.2f} x the reference's 200.0" in at.message
    assert not below.passed and "0.45 x the reference's 200.0" in below.message
    assert "BLOCK_K 64" in below.message  # what to change


def test_an_untimed_kernel_fails_with_the_reason() -> None:
    case = speed_case({"error": "wrong result at this size"}, {"tflops": 1.0, "ms": 1.0}, FLOOR)
    assert not case.passed and case.message == "wrong result at this size"


def test_without_a_reference_the_speed_is_reported_not_compared() -> None:
    case = speed_case({"tflops": 50.0, "ms": 2.0}, {}, FLOOR)
    assert case.passed and "50.0 TFLOP/s; not compared" in case.message


def test_the_table_lists_every_row_and_why_one_is_missing() -> None:
    rows = [("your kernel", {"tflops": 123.4, "ms": 1.114}), ("torch", {"error": "no torch"})]
    table = speed_table((4096, 4096, 4096), rows).splitlines()
    assert table[0].startswith("speed on the GPU, fp16 4096 x 4096 x 4096")
    assert "123.4 TFLOP/s" in table[1] and "1.114 ms" in table[1]
    assert "n/a" in table[2] and "no torch" in table[2]


@pytest.mark.gpu
def test_check_18_on_the_gpu_times_the_kernel_against_the_reference(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    ex = catalog.find_exercise("18")
    main(["exercises", "start", "18", "--workspace", str(tmp_path)])
    path = tmp_path / "kernels" / f"{ex.slug}.py"
    path.write_text((ex.folder / "solution.py").read_text(encoding="utf-8"), encoding="utf-8")
    capsys.readouterr()
    rc = main(["exercises", "check", "18", "--gpu", "--workspace", str(tmp_path), "--json"])
    report = json.loads(capsys.readouterr().out)["exercises"][0]
    print(report["note"])  # the table, in the GPU log
    speed = [c for c in report["cases"] if c["name"].startswith("speed on the GPU")]
    assert rc == 0 and len(speed) == 1 and speed[0]["passed"], report
    assert "TFLOP/s" in speed[0]["message"] and "x the reference's" in speed[0]["message"]
    assert "your kernel" in report["note"] and "reference solution" in report["note"]
