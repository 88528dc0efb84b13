/**
 * What a terminal shows after some output: the few control sequences a log and log-update write
 * (carriage return, newline, erase line, cursor up/down/to a column), with colours and the
 * synchronized-output markers read past. Any other sequence fails the test, so a new kind of
 * output is looked at before it is trusted. Rows do not wrap: the live line is cut to the width
 * and never wraps, and a long log line is still one line of what was written.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI control sequences begin with ESC (\x1b)
const TOKEN = /\x1b\[([?\d;]*)([A-Za-z])|\r|\n|[^\x1b\r\n]+/gy;

export class TerminalScreen {
    readonly rows: string[] = [''];
    row = 0;
    column = 0;

    write(output: string): void {
        // TOKEN is sticky: its matches run on from the start, each where the last ended, up to the first non-token.
        let read = 0;
        for (const [token, parameters, command] of output.matchAll(TOKEN)) {
            read += token.length;
            if (token === '\r') this.column = 0;
            else if (token === '\n') {
                // As a terminal in its usual mode (ONLCR) takes it: to the start of the next row.
                this.moveTo(this.row + 1);
                this.column = 0;
            } else if (command !== undefined) this.control(parameters!, command, token);
            else this.print(token);
        }
        if (read !== output.length)
            throw new Error(`unreadable output at ${JSON.stringify(output.slice(read, read + 20))}`);
    }

    /** The screen as text, rows without their trailing blanks, blank rows at the bottom left off. */
    text(): string {
        return this.rows
            .map((row) => row.trimEnd())
            .join('\n')
            .trimEnd();
    }

    private control(parameters: string, command: string, token: string): void {
        const count = Number(parameters || 1);
        if (command === 'm' || parameters === '?2026') return; // colours; synchronized output on and off
        if (command === 'K' && parameters === '2') this.rows[this.row] = '';
        else if (command === 'K' && parameters === '') this.rows[this.row] = this.rows[this.row]!.slice(0, this.column);
        else if (command === 'A') this.moveTo(Math.max(0, this.row - count));
        else if (command === 'B') this.moveTo(this.row + count);
        else if (command === 'G') this.column = count - 1;
        else throw new Error(`unexpected control sequence ${JSON.stringify(token)}`);
    }

    private moveTo(row: number): void {
        while (this.rows.length <= row) this.rows.push('');
        this.row = row;
    }

    private print(text: string): void {
        const line = this.rows[this.row]!.padEnd(this.column);
        this.rows[this.row] = line.slice(0, this.column) + text + line.slice(this.column + text.length);
        this.column += text.length;
    }
}

/** `output` without colours. */
export function withoutColours(output: string): string {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colours begin with ESC (\x1b)
    return output.replace(/\x1b\[[\d;]*m/g, '');
}
