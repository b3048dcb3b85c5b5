// Module root for FerryRecords; see the module's files.
