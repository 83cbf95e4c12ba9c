package embed

// MinisoPath is the ISO9660 primary name of the minimal ISO's rebuild table.
const MinisoPath = "COREOS/MINISO.DAT"

// MetadataPaths are the files in which a CoreOS live ISO describes its embed areas and
// features (ISO9660 primary names). No area may lie in them: editing it would change what
// the next command reads about the ISO.
var MetadataPaths = []string{igninfoPath, kargsJSONPath, featuresPath, MinisoPath}
