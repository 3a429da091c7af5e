/**
 * The testkit's only environment variable: `ARS_TEST_LOGS=1` echoes the
 * logs of every test system to stderr (they are captured either way and
 * shown when a system fails to start).
 */
export function echoLogsByDefault(): boolean {
  const value = process.env['ARS_TEST_LOGS'];
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}
