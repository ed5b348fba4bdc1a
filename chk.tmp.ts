import { readCheckpointDir } from './src/model/checkpointFs';
import { modelFromCheckpoint } from './src/model/checkpoint';
const c = await readCheckpointDir(process.argv[2]!); modelFromCheckpoint(c); console.log('ok');
