"""Validates JSON documents against a JSON Schema (the draft the schema names).

    python validate.py SCHEMA.json DOC.json [DOC.json ...]

Prints every violation (document, JSON path, message) and `N passed, N failed`;
exit 1 when a document is invalid. Run by server/tests/schemas.rs.
"""
import json
import sys

import jsonschema


def main() -> int:
    schema_path, *docs = sys.argv[1:]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    passed = failed = 0
    for path in docs:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            failed += 1
            for e in errors[:20]:
                print(f"{path}: {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}")
        else:
            passed += 1
    print(f"validated with {cls.__name__}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
