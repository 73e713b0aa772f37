/// How the text of a parked change begins once a newer change of its record superseded it
/// (docs/local-changes.md): the store writes it, `syncctl status` reads it to name such a change apart.
public let supersededChangeMark = "superseded by a newer change; was: "
