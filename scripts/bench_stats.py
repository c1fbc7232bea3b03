"""Medians and table cells shared by the benchmark reports (bench-report.py, capture-bench.sh)."""

import statistics

NOISY = 0.25  # a row whose range exceeds 25 % of its median is flagged


def summary(values):
    """Median, range and whether the range is wide, of the values that are not None."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    median = statistics.median(values)
    spread = max(values) - min(values)
    return {"median": median, "min": min(values), "max": max(values), "noisy": median > 0 and spread / median > NOISY}


def cell(stat, digits=2, missing="n/a"):
    """`median (min–max)`, flagged ⚠ when noisy; `missing` for no values."""
    if stat is None:
        return missing
    if stat["min"] == stat["max"]:
        return f"{stat['median']:.{digits}f}"
    mark = " ⚠" if stat["noisy"] else ""
    return f"{stat['median']:.{digits}f} ({stat['min']:.{digits}f}–{stat['max']:.{digits}f}){mark}"
