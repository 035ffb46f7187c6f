/**
 * @module models/import/refusal
 * Why an import was refused: a sentence naming what is wrong with the files,
 * and whether it was too large (413 `model_import_too_large`) or otherwise
 * unusable (400 `model_import_invalid`).
 */
import { ApiError } from '../../errors/api-error.js';

export class ImportRefused extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }

  toApiError(): ApiError {
    return new ApiError(this.tooLarge ? 'model_import_too_large' : 'model_import_invalid', { reason: this.message });
  }
}
