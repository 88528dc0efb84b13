'use strict';

const published = require('ow-as-published');

const ow = published.default;

/**
 * ow 0.28's `ow.optional` is a getter that defines ~35 predicate getters on a new object at every
 * access (13.5 µs), and Crawlee reads it for every request it validates. The object it builds
 * holds nothing but those getters, and each of them still makes a new predicate whenever it is
 * read, so one such object serves every call. The getter cannot be redefined on ow (it is not
 * configurable): this function calls ow and carries its properties, `optional` built once.
 */
function owOptionalOnce(value, labelOrPredicate, predicate) {
    return ow(value, labelOrPredicate, predicate);
}
Object.defineProperties(owOptionalOnce, {
    ...Object.getOwnPropertyDescriptors(ow),
    optional: { value: ow.optional, enumerable: true },
});

module.exports = Object.defineProperties(
    {},
    { ...Object.getOwnPropertyDescriptors(published), default: { value: owOptionalOnce, enumerable: true } },
);
