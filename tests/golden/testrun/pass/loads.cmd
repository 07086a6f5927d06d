test --load tests/golden/testrun/trees/loads/extra/greeter.bt tests/golden/testrun/trees/loads
