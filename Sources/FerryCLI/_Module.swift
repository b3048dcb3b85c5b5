// Module root for FerryCLI; see the module's files.
