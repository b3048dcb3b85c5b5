// FerryPredicate: NSPredicate format strings parsed, printed, compiled and validated for CloudKit.
