// FerryCompression: gzip streams (RFC 1952) over zlib, parallel deflate, and archives.
