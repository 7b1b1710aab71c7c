export async function run() {}
