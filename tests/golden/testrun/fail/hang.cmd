test --timeout 1 tests/golden/testrun/trees/failing/hang.btscript
