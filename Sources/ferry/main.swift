import FerryCLI

Ferry.main()
