#!/usr/bin/env python3
"""Runs main.py and compares what it prints with expected_output.txt: check_demo.py MAIN EXPECTED."""
import difflib
import subprocess
import sys

out = subprocess.run([sys.executable, sys.argv[1]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
expected = open(sys.argv[2]).read()
if out != expected:
    sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), out.splitlines(True), "expected", "main.py"))
    sys.exit(1)
