declare function callsites(): NodeJS.CallSite[];
export default callsites;
