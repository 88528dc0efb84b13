import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PinnedLine } from '../../src/monitor/pinnedLine.js';
import { FakeTerminal } from './fakeTerminal.js';

describe('PinnedLine', () => {
    it('keeps the line at the bottom, below whole log lines, and redraws it in place', async () => {
        const terminal = new FakeTerminal(40);
        const line = new PinnedLine(terminal.asTerminal());
        const log = line.stream();
        line.show(() => 'pages 1');
        log.write('10:00:01 INFO: crawling\n');
        line.show(() => 'pages 2');
        log.write('10:00:02 WARN: retrying\n');
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(terminal.screen.text(), '10:00:01 INFO: crawling\n10:00:02 WARN: retrying\npages 2');
        // The cursor waits on the row below the line, so whatever comes next starts a row of its own.
        assert.equal(terminal.screen.row, 3);
        assert.equal(terminal.screen.column, 0);
    });

    it('takes the line away when cleared, and then passes writes through as they are', () => {
        const terminal = new FakeTerminal(40);
        const line = new PinnedLine(terminal.asTerminal());
        line.show(() => 'pages 7');
        line.clear();
        line.writeAbove('summary\n');
        assert.equal(terminal.screen.text(), 'summary');
        assert.equal(terminal.written.at(-1), 'summary\n');
        line.clear();
        assert.equal(terminal.screen.text(), 'summary');
    });

    it('makes the line anew for the width of a resized terminal, leaving the last column free', () => {
        const terminal = new FakeTerminal(80);
        const line = new PinnedLine(terminal.asTerminal());
        const widths: number[] = [];
        line.show((width) => {
            widths.push(width);
            return `${width} columns`;
        });
        terminal.resize(30);
        assert.deepEqual(widths, [79, 29]);
        assert.equal(terminal.screen.text(), '29 columns');
        line.clear();
        assert.equal(terminal.listenerCount('resize'), 0);
    });
});
