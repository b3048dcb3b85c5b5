// FerryXML: records as XML over libxml2.
