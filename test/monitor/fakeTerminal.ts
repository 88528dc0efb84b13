/**
 * A terminal for the live line's tests: what is written goes
 * onto a TerminalScreen; its size can change as a window's does.
 */
import { EventEmitter } from 'node:events';
import type { Terminal } from '../../src/monitor/pinnedLine.js';
import { TerminalScreen } from './terminalScreen.js';

export class FakeTerminal extends EventEmitter {
    readonly isTTY = true;
    readonly screen = new TerminalScreen();
    readonly written: string[] = [];

    constructor(
        public columns: number,
        public rows = 24,
        private readonly colours = false,
    ) {
        super();
    }

    hasColors(): boolean {
        return this.colours;
    }

    write(text: string): boolean {
        this.written.push(text);
        this.screen.write(text);
        return true;
    }

    resize(columns: number): void {
        this.columns = columns;
        this.emit('resize');
    }

    asTerminal(): Terminal {
        // biome-ignore lint/plugin/noDoubleCast: a WriteStream's on() and off() return one, and this fake is not one
        return this as unknown as Terminal;
    }
}
