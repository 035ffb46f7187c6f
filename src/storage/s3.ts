/**
 * @module storage/s3
 * `BlobStorage` on an S3-compatible bucket (AWS S3, R2, GCS's S3 API, MinIO,
 * Ceph), through the AWS SDK v3. Blobs are objects under an optional prefix.
 *
 * S3 makes an object visible only once its PUT or multipart upload is
 * complete, so a reader sees the old bytes or the new, never a part, and a
 * writer killed mid-upload leaves nothing visible (only unfinished upload
 * parts, which the SDK aborts on an error and a bucket lifecycle rule
 * removes after a crash). `write` streams through a multipart upload holding
 * at most `queueSize` parts in memory; `read` streams a GET with its `Range`.
 *
 * Credentials come from the SDK's default chain (environment, shared config,
 * web identity, instance roles), never from Voicegate's configuration.
 */
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { checkBlobKey, type BlobInfo, type BlobStorage, type BlobUrlOptions, type ByteRange } from '../cache/blob-storage.js';

export interface S3BlobStorageOptions {
  bucket: string;
  /** Key prefix (`/`-separated parts, no slash at either end); '' for the bucket's root. */
  prefix: string;
  /** null: the SDK's own (`AWS_REGION`, the shared config). */
  region: string | null;
  /** null: the SDK's own (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, else AWS). */
  endpoint: string | null;
  /** Bucket in the path rather than the host name (MinIO, s3rver, many self-hosted servers). */
  forcePathStyle: boolean;
  /** Bytes of one multipart part (5 MiB, S3's minimum, unless set). */
  partBytes?: number;
  /** Parts uploaded at once, and so held in memory, per write. */
  queueSize?: number;
}

const MiB = 1024 * 1024;

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

export class S3BlobStorage implements BlobStorage {
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partBytes: number;
  private readonly queueSize: number;

  constructor(options: S3BlobStorageOptions, client?: S3Client) {
    if (options.prefix) checkBlobKey(options.prefix);
    this.bucket = options.bucket;
    this.prefix = options.prefix;
    this.partBytes = Math.max(options.partBytes ?? 5 * MiB, 5 * MiB);
    this.queueSize = options.queueSize ?? 2;
    const config: S3ClientConfig = {
      forcePathStyle: options.forcePathStyle,
      // Checksums only where the API requires them: many S3-compatible servers refuse the SDK's
      // default trailing checksums (aws-chunked bodies), and TLS already guards the bytes.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // An unreachable bucket fails fast; the job runner retries with its own backoff. The wait for
      // a free socket counts against that timeout, and every streamed download holds one for as
      // long as its client reads: far more sockets than the SDK's default 50.
      requestHandler: { connectionTimeout: 5_000, httpAgent: { keepAlive: true, maxSockets: 512 }, httpsAgent: { keepAlive: true, maxSockets: 512 } },
      ...(options.region ? { region: options.region } : {}),
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    };
    this.client = client ?? new S3Client(config);
  }

  private objectKey(key: string): string {
    checkBlobKey(key);
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async put(key: string, data: Buffer): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: data, ContentLength: data.length }));
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return Buffer.from(await response.Body!.transformToByteArray());
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async write(key: string, source: AsyncIterable<Buffer>): Promise<number> {
    const Key = this.objectKey(key);
    let bytes = 0;
    let failed: { error: unknown } | null = null;
    async function* counted(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of source) {
          bytes += chunk.length;
          yield chunk;
        }
      } catch (error) {
        failed = { error };
        throw error;
      }
    }
    // One PUT when the bytes fit a part, else a multipart upload completed only after the last part:
    // either way the object appears whole or not at all. A failed source aborts the upload.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body: Readable.from(counted(), { objectMode: false }) },
      partSize: this.partBytes,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      // The source's own failure is the cause, whatever aborting the upload then answered
      // (parts an abort could not remove are left to the bucket's lifecycle rule).
      throw failed ? (failed as { error: unknown }).error : err;
    }
    return bytes;
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      return response.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<boolean> {
    // S3 answers a delete of nothing as a success: the head says whether there was a blob.
    if (!(await this.stat(key))) return false;
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    return true;
  }

  async stat(key: string): Promise<BlobInfo | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { key, size: head.ContentLength ?? 0, modifiedAt: head.LastModified?.getTime() ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async *list(prefix = ''): AsyncIterable<BlobInfo> {
    if (prefix) checkBlobKey(prefix);
    const base = this.prefix ? `${this.prefix}/` : '';
    const Prefix = prefix ? `${base}${prefix}/` : base;
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix, ContinuationToken }));
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(base.length);
        // Objects someone else put under the prefix with names no blob has are not ours.
        if (!key || !key.split('/').every((part) => /^[A-Za-z0-9._-]+$/.test(part) && part !== '.' && part !== '..')) continue;
        yield { key, size: object.Size ?? 0, modifiedAt: object.LastModified?.getTime() ?? 0 };
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken);
  }

  /** A presigned GET of the blob, valid for `expiresInSeconds`, answered with the type and file name given. */
  async url(key: string, options: BlobUrlOptions): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: this.objectKey(key),
      ...(options.contentType ? { ResponseContentType: options.contentType } : {}),
      ...(options.filename ? { ResponseContentDisposition: `attachment; filename="${options.filename}"` } : {}),
    });
    return getSignedUrl(this.client, command, { expiresIn: options.expiresInSeconds });
  }

  close(): void {
    this.client.destroy();
  }
}
