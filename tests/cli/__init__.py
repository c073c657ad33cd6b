"""Tests of the command line (a package so its module names stay unique)."""
