test tests/golden/testrun/trees/loads/uses_load_test.bt
