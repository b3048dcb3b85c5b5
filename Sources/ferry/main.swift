import FerryCLI
