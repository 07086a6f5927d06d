test --load tests/golden/testrun/trees/none.bt tests/golden/testrun/trees/basic
