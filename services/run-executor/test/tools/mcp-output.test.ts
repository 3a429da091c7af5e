import { describe, expect, it } from 'vitest';
import { MCP_CALL_TOOL, refuse, ServiceError } from '@ars/contracts';
import {
  base64Bytes,
  MCP_ERROR_MAX_CHARS,
  renderBlock,
  renderResult,
  toolErrorOfCall,
  toolErrorOfResult,
} from '../../src/tools/mcp-output.ts';
import { ToolError } from '../../src/tools/tool.ts';

const png = Buffer.alloc(1_000, 7).toString('base64');

describe('MCP tool results for the planner', () => {
  it('joins text blocks', () => {
    const content = [
      { type: 'text', text: 'first' },
      { type: 'text', text: 'second' },
    ];
    expect(renderResult({ content })).toBe('first\nsecond');
  });

  it('summarises images and audio by type, MIME type and decoded size, never their base64', () => {
    const output = renderResult({
      content: [
        { type: 'image', data: png, mimeType: 'image/png' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      ],
    });
    expect(output).toBe('[image: image/png, 1000 bytes]\n[audio: audio/wav, 3 bytes]');
    expect(output).not.toContain(png.slice(0, 16));
  });

  it("adds a resource link's description: how to read an artifact an offloaded part went to", () => {
    const output = renderBlock({
      type: 'resource_link',
      uri: 'artifact://a-1',
      name: 'a-1',
      mimeType: 'text/plain',
      size: 10_485_760,
      description: 'content block 0 (text) (10485760 bytes) stored as artifact a-1: read it with artifact_read',
    });
    expect(output).toBe(
      '[resource_link: artifact://a-1, text/plain, 10485760 bytes] content block 0 (text) (10485760 bytes) stored as artifact a-1: read it with artifact_read',
    );
  });

  it('names a resource link by URI, and an embedded resource: its text inline, its blob summarised', () => {
    const output = renderResult({
      content: [
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a', mimeType: 'text/plain', size: 12 },
        { type: 'resource', resource: { uri: 'mem://notes', mimeType: 'text/markdown', text: '# Notes' } },
        { type: 'resource', resource: { uri: 'mem://bin', mimeType: 'application/pdf', blob: png } },
        { type: 'widget' },
      ],
    });
    expect(output.split('\n')).toEqual([
      '[resource_link: file:///a.txt, text/plain, 12 bytes]',
      '[resource: mem://notes, text/markdown]',
      '# Notes',
      '[resource: mem://bin, application/pdf, 1000 bytes]',
      '[widget]',
    ]);
  });

  it('falls back to the structured content as JSON when there is no content block', () => {
    expect(renderResult({ content: [], structured_content: { temperature: 21 } })).toBe('{"temperature":21}');
    expect(renderResult({ content: [] })).toBe('');
  });

  it('counts the bytes a base64 text decodes to, padding included', () => {
    expect([base64Bytes(''), base64Bytes('QQ=='), base64Bytes('QUI='), base64Bytes('QUJD')]).toEqual([0, 1, 2, 3]);
  });

  it("makes an isError result a permanent failure with the server's text, clipped", () => {
    const error = toolErrorOfResult({ content: [{ type: 'text', text: 'no such file' }] });
    expect([error.errorClass, error.message]).toEqual(['permanent', 'no such file']);
    expect(toolErrorOfResult({ content: [] }).message).toBe('the tool reported an error');
    const long = toolErrorOfResult({ content: [{ type: 'text', text: 'x'.repeat(10_000) }] });
    expect(long.message).toHaveLength(MCP_ERROR_MAX_CHARS + 1);
  });
});

describe('MCP call failures as tool errors', () => {
  const refusal = (reason: Parameters<typeof refuse<typeof MCP_CALL_TOOL>>[1]) =>
    toolErrorOfCall(refuse(MCP_CALL_TOOL, reason, 'said the host'));

  it('retries what may pass later: a server not connected is transient, a server too slow a timeout', () => {
    expect([refusal('server_unavailable').errorClass, refusal('call_timeout').errorClass]).toEqual([
      'transient',
      'timeout',
    ]);
  });

  it('never retries an unknown tool, a protocol error or a result too large', () => {
    for (const reason of ['unknown_tool', 'protocol_error', 'result_too_large', 'unknown_agent'] as const) {
      expect(refusal(reason).errorClass).toBe('permanent');
    }
  });

  it('reads a call the host cancelled as cancelled, and names the reason in the message', () => {
    const error = refusal('call_cancelled');
    expect([error.errorClass, error.message]).toEqual(['cancelled', 'call_cancelled: said the host']);
  });

  it('reads the host not answering as transient, its RPC timing out as a timeout, anything else as permanent', () => {
    const of = (code: 'unavailable' | 'timeout' | 'internal') => toolErrorOfCall(new ServiceError(code, 'x'));
    expect([of('unavailable'), of('timeout'), of('internal')].map((e) => e.errorClass)).toEqual([
      'transient',
      'timeout',
      'permanent',
    ]);
    expect(toolErrorOfCall(new Error('boom')).errorClass).toBe('permanent');
  });

  it('keeps a ToolError as it is', () => {
    const error = new ToolError('cancelled', 'aborted');
    expect(toolErrorOfCall(error)).toBe(error);
  });
});
