/**
 * A line pinned to the bottom of a terminal, below the log: log-update redraws it in place, and
 * everything else bound for the terminal goes through `writeAbove`, which takes the line away,
 * writes, and draws it again underneath, so the line never lands inside a log line. A write to
 * the terminal that bypasses `writeAbove` is not kept apart from the line.
 */
import { Writable } from 'node:stream';
import type { WriteStream } from 'node:tty';
import { createLogUpdate } from 'log-update';

/** What the line shows, made for the columns it may take; asked again when the terminal is resized. */
export type LineContent = (width: number) => string;

export type Terminal = Pick<WriteStream, 'write' | 'columns' | 'rows' | 'isTTY' | 'hasColors' | 'on' | 'off'>;

export class PinnedLine {
    private readonly update: ReturnType<typeof createLogUpdate>;
    /** What is pinned now, and the text last drawn of it; undefined while nothing is. */
    private content: LineContent | undefined;
    private text = '';
    private readonly redraw = () => this.draw();

    constructor(private readonly terminal: Terminal) {
        // The cursor stays visible: hidden, it would need an exit hook to come back after a crash or a kill.
        this.update = createLogUpdate(terminal as NodeJS.WriteStream, { showCursor: true });
    }

    /** Whether the terminal takes colours: its colour depth, which honours NO_COLOR, FORCE_COLOR and TERM=dumb. */
    get colors(): boolean {
        return this.terminal.hasColors();
    }

    /** Pins `content` (in place of what was pinned), or draws it afresh. */
    show(content: LineContent): void {
        if (!this.content) this.terminal.on('resize', this.redraw);
        this.content = content;
        this.draw();
    }

    /** Writes `text` (whole lines) above the line. */
    writeAbove(text: string): void {
        if (!this.content) {
            this.terminal.write(text);
            return;
        }
        this.update.clear();
        this.terminal.write(text);
        this.update(this.text);
    }

    /**
     * A stream into `writeAbove`, for a logger's destination: one per logger, so one ending leaves the others writing.
     */
    stream(): Writable {
        return new Writable({
            decodeStrings: false,
            write: (chunk: Buffer | string, _encoding, done) => {
                this.writeAbove(String(chunk));
                done();
            },
        });
    }

    /** Takes the line away; what is written next goes where it was. */
    clear(): void {
        if (!this.content) return;
        this.terminal.off('resize', this.redraw);
        this.content = undefined;
        this.update.clear();
    }

    private draw(): void {
        // The last column is left free: a character there puts some terminals into their next row at once.
        const { content } = this;
        if (!content) return;
        this.text = content(Math.max(1, this.terminal.columns - 1));
        this.update(this.text);
    }
}

/**
 * The pinned line of stderr when stderr is a terminal that tells its size; undefined elsewhere (pipes, files, CI logs).
 */
export const stderrLine: PinnedLine | undefined =
    process.stderr.isTTY && process.stderr.columns > 0 && process.stderr.rows > 0
        ? new PinnedLine(process.stderr)
        : undefined;
