run tests/golden/testrun/trees/run/dnu_suggestion.bt
