// FerryArchive: self-describing archives of a record store.
