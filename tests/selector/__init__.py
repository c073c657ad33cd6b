"""Tests of the selector (a package so its module names stay unique)."""
