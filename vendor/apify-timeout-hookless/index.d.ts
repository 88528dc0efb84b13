export declare class TimeoutError extends Error {}
export declare function addTimeoutToPromise<T>(
    handler: () => Promise<T>,
    timeoutMillis: number,
    errorMessage: string | Error,
): Promise<T>;
export declare function tryCancel(): void;
