/**
 * @module config/sections/limits
 * How the limit counters behave when the shared ones cannot be reached.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

const LIMITS_DEFAULTS = { whenSharedCountersFail: 'local' as const, expectedGateways: null };

/** How the limit counters behave when the shared ones (Redis) cannot be reached. */
const limitsConfigSchema = z
  .object({
    /**
     * `local`: each server enforces the limits on its own, an organisation's limit divided among the
     * servers believed alive, until Redis answers again. `refuse`: 503 `limits_unavailable` meanwhile.
     */
    whenSharedCountersFail: z.enum(['local', 'refuse']).default(LIMITS_DEFAULTS.whenSharedCountersFail),
    /** The servers to divide a limit among while Redis is away; null: those that were alive when it last answered. */
    expectedGateways: z.number().int().min(1).max(10_000).nullable().default(LIMITS_DEFAULTS.expectedGateways),
  })
  .strict();

export const limitsSection = defineSection('limits', limitsConfigSchema.default(LIMITS_DEFAULTS), {
  VOICEGATE_LIMITS_WHEN_SHARED_COUNTERS_FAIL: ['whenSharedCountersFail', 'string'],
  VOICEGATE_LIMITS_EXPECTED_GATEWAYS: ['expectedGateways', 'number'],
});

export type LimitsConfig = z.output<typeof limitsConfigSchema>;
