test --json tests/golden/testrun/trees/failing/cases.btscript
