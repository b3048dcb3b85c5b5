// FerryChangeLog: change logs, CloudKit change feeds, replay and diff.
