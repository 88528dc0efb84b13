export * from 'ow-as-published';
export { default } from 'ow-as-published';
