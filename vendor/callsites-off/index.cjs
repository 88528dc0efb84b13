'use strict';

/** No stack frames: ow then names the argument generically ("argument") in its errors, and validates as before. */
const callsites = () => [];

module.exports = callsites;
module.exports.default = callsites;
