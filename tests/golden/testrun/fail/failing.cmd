test tests/golden/testrun/trees/failing/cases.btscript
