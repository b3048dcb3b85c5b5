// Module root for FerryTestSupport; see the module's files.
