/**
 * @module config/sections/storage
 * Where long-form jobs keep their segments and results: a folder (`jobs.dir`,
 * the default for one machine) or an S3-compatible bucket, which any number
 * of gateways share without a shared volume. Credentials are never set here:
 * the AWS SDK's default chain finds them (environment, shared config, web
 * identity, instance roles).
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

const STORAGE_DEFAULTS = { kind: 'files' as const, url: null, bucket: null, prefix: '', region: null, endpoint: null, forcePathStyle: false };

/** Key parts as blob keys have them (`[A-Za-z0-9._-]`), joined by `/`. */
const PREFIX = /^([A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*)?$/;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

const storageSchema = z
  .object({
    /** `files`: under `jobs.dir`; `s3`: objects in `bucket` under `prefix`. */
    kind: z.enum(['files', 's3']).default(STORAGE_DEFAULTS.kind),
    /** `s3://bucket/prefix`: sets `kind`, `bucket` and `prefix` at once. */
    url: z
      .string()
      .regex(/^s3:\/\/[^/]+(\/.*)?$/, 'must be s3://bucket or s3://bucket/prefix')
      .nullable()
      .default(STORAGE_DEFAULTS.url),
    bucket: z.string().regex(BUCKET, 'must be an S3 bucket name').nullable().default(STORAGE_DEFAULTS.bucket),
    /** Every object's key starts with `<prefix>/`, so one bucket may serve several deployments. */
    prefix: z.string().regex(PREFIX, 'must be /-separated parts of letters, digits, dot, dash or underscore').default(STORAGE_DEFAULTS.prefix),
    /** null: the SDK's own (`AWS_REGION`, the shared config file). */
    region: z.string().min(1).nullable().default(STORAGE_DEFAULTS.region),
    /** An S3-compatible server's URL; null: the SDK's own (`AWS_ENDPOINT_URL_S3`, else AWS). */
    endpoint: z.url({ protocol: /^https?$/ }).nullable().default(STORAGE_DEFAULTS.endpoint),
    /** The bucket in the URL's path rather than its host name (MinIO and most self-hosted servers). */
    forcePathStyle: z.boolean().default(STORAGE_DEFAULTS.forcePathStyle),
  })
  .strict()
  .transform((storage, context) => {
    let { kind, bucket, prefix } = storage;
    if (storage.url) {
      const [, name, path = ''] = /^s3:\/\/([^/]+)\/?(.*)$/.exec(storage.url)!;
      kind = 's3';
      bucket = name;
      prefix = path.replace(/\/+$/, '');
      if (!BUCKET.test(bucket)) context.addIssue({ code: 'custom', path: ['url'], message: `${JSON.stringify(bucket)} is not an S3 bucket name` });
      if (!PREFIX.test(prefix)) context.addIssue({ code: 'custom', path: ['url'], message: 'the prefix must be /-separated parts of letters, digits, dot, dash or underscore' });
    }
    if (kind === 's3' && !bucket) context.addIssue({ code: 'custom', path: ['bucket'], message: 'an s3 storage needs a bucket (or url: s3://bucket/prefix)' });
    return { ...storage, kind, bucket, prefix };
  });

export const storageSection = defineSection('storage', storageSchema.default(STORAGE_DEFAULTS), {
  VOICEGATE_STORAGE_URL: ['url', 'string'],
  VOICEGATE_STORAGE_FORCE_PATH_STYLE: ['forcePathStyle', 'boolean'],
});

export type StorageConfig = z.output<typeof storageSchema>;
