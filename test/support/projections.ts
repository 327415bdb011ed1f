import { allProjections } from '../../projections/index.js';
import { DEFAULT_ACCOUNT_TOKEN_NAMESPACE } from '../../src/config.js';

/** The read models as a service with the default settings builds them. */
export const defaultProjections = allProjections({ accountTokenNamespace: DEFAULT_ACCOUNT_TOKEN_NAMESPACE });
