// Module root for FerryNDJSON; see the module's files.
