/**
 * A configuration problem the user can fix (a flag, a variable,
 * a storage dir in use); printed as one line, exit code 2.
 */
export class ConfigError extends Error {
    override readonly name = 'ConfigError';
}
