/**
 * Freezes a value and everything it holds, for values that every use shares (a parsed marker's value, a
 * known type's schema): changing one in place throws instead of changing it for the others. A value that
 * is frozen already is left as it is, so shared and cyclic references are walked once.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
