test tests/golden/testrun/trees/failing/exit.btscript
