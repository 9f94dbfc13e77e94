//! Node-kind and field names of the `fev` grammar, in one place (checked against
//! `NODE_TYPES` by a test).

pub const SOURCE_FILE: &str = "source_file";
pub const DEFINITION: &str = "definition";
pub const ARGUMENT: &str = "argument";
pub const NULL: &str = "null";
pub const FIELD: &str = "field";
pub const UNSIGNED: &str = "unsigned";
pub const TYPE: &str = "type";
pub const ARRAY_SIZE: &str = "array_size";
pub const PARAMETER: &str = "parameter";
pub const NAMED_ADDRESS: &str = "named_address";
pub const OFFSET: &str = "offset";
pub const INDEX: &str = "index";
pub const SYMBOL_REF: &str = "symbol_ref";
pub const ADDRESS: &str = "address";
pub const NUMBER: &str = "number";
pub const IDENTIFIER: &str = "identifier";
pub const COMMENT: &str = "comment";
pub const ERROR: &str = "ERROR";

/// Every named node kind the code relies on.
pub const ALL: &[&str] = &[
    SOURCE_FILE,
    DEFINITION,
    ARGUMENT,
    NULL,
    FIELD,
    UNSIGNED,
    TYPE,
    ARRAY_SIZE,
    PARAMETER,
    NAMED_ADDRESS,
    OFFSET,
    INDEX,
    SYMBOL_REF,
    ADDRESS,
    NUMBER,
    IDENTIFIER,
    COMMENT,
];

pub mod field {
    pub const FUNCTION: &str = "function";
    pub const UNSIGNED: &str = "unsigned";
    pub const TYPE: &str = "type";
    pub const ARRAY: &str = "array";
    pub const TARGET: &str = "target";
    pub const COUNT: &str = "count";
    pub const NAME: &str = "name";
    pub const REDIRECT: &str = "redirect";
    pub const VALUE: &str = "value";

    pub const ALL: &[&str] = &[FUNCTION, UNSIGNED, TYPE, ARRAY, TARGET, COUNT, NAME, REDIRECT, VALUE];
}
