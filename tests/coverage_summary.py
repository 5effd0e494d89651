"""Prints the line and branch coverage of keras_bert3 that `bash tests/run_all.sh
--coverage` combined (`python -m tests.coverage_summary`), from coverage.py's JSON report."""

import json
import subprocess
import sys


def main():
    report = ".coverage-data/coverage.json"
    subprocess.run([sys.executable, "-m", "coverage", "json", "--quiet", "-o", report], check=True)
    with open(report) as file:
        totals = json.load(file)["totals"]
    lines = totals["covered_lines"], totals["num_statements"]
    branches = totals["covered_branches"], totals["num_branches"]
    print(
        "Coverage of keras_bert3, both passes: "
        f"lines {lines[0]:,} of {lines[1]:,} ({100 * lines[0] / lines[1]:.2f}%), "
        f"branches {branches[0]:,} of {branches[1]:,} ({100 * branches[0] / branches[1]:.2f}%)"
    )


if __name__ == "__main__":
    main()
