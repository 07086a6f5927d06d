test --bogus
