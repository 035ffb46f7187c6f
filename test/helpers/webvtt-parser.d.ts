/** The parts of webvtt-parser (no types of its own) the caption tests use. */
declare module 'webvtt-parser' {
  interface VttNode {
    type: 'object' | 'text' | 'timestamp';
    name?: string;
    value?: string;
    children?: VttNode[];
  }
  interface VttCue {
    id: string;
    startTime: number;
    endTime: number;
    text: string;
    tree: { children: VttNode[] };
  }
  class WebVTTParser {
    constructor(entities?: Record<string, string>);
    parse(input: string, mode?: 'metadata' | 'chapters'): { cues: VttCue[]; errors: { message: string; line: number; col: number }[]; time: number };
  }
  const webvtt: { WebVTTParser: typeof WebVTTParser };
  export default webvtt;
}
