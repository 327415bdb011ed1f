import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Adds `.openapi()` to every zod schema, so the schemas that validate requests also document them.
extendZodWithOpenApi(z);

export { z };
