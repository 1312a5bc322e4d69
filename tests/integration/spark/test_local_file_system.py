"""The local session's Hadoop file system for ``file:`` (jvm/local-fs): Hadoop's own, with permissions set and links
looked up through java.nio instead of a chmod/readlink child process per file; what it writes is what Hadoop's
would."""
from __future__ import annotations

import os
import stat

import pytest

pytestmark = pytest.mark.spark


@pytest.fixture
def hadoop(spark_session):
    jvm = spark_session._jvm
    conf = spark_session._jsc.hadoopConfiguration()
    return jvm, conf, jvm.org.apache.hadoop.fs.FileSystem.getLocal(conf)


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_local_session_uses_it_for_both_of_hadoops_apis(spark_session, hadoop):
    jvm, conf, fs = hadoop
    assert fs.getClass().getName() == "streamsonspark.hadoop.NioLocalFileSystem"
    assert fs.getRaw().getClass().getName() == "streamsonspark.hadoop.NioRawLocalFileSystem"
    context = jvm.org.apache.hadoop.fs.FileContext.getLocalFSFileContext(conf)
    assert context.getDefaultFileSystem().getClass().getName() == "streamsonspark.hadoop.NioLocalFs"


def test_files_and_directories_get_the_permissions_hadoop_gives_them(hadoop, tmp_path):
    jvm, conf, fs = hadoop
    Path, FsPermission = jvm.org.apache.hadoop.fs.Path, jvm.org.apache.hadoop.fs.permission.FsPermission
    directory = str(tmp_path / "d")
    assert fs.mkdirs(Path(directory), FsPermission(0o750))
    assert mode(directory) == 0o750
    out = fs.create(Path(directory + "/f"), FsPermission(0o640), True, 4096, 1, 1 << 20, None)
    out.write(b"x")
    out.close()
    assert mode(directory + "/f") == 0o640
    assert open(directory + "/f", "rb").read() == b"x"
    assert os.path.exists(directory + "/.f.crc")   # checksummed, as Hadoop's LocalFileSystem
    for bits in (0o000, 0o777, 0o604, 0o1777):     # the sticky bit goes through Hadoop's own chmod
        fs.setPermission(Path(directory), FsPermission(bits))
        assert mode(directory) == bits
        assert fs.getFileStatus(Path(directory)).getPermission().toShort() == bits


def test_link_status_is_hadoops_for_files_and_links(hadoop, tmp_path):
    jvm, conf, fs = hadoop
    Path = jvm.org.apache.hadoop.fs.Path
    target = tmp_path / "target"
    target.write_bytes(b"12345")
    link = tmp_path / "link"
    link.symlink_to(target)
    plain = fs.getFileLinkStatus(Path(str(target)))
    assert not plain.isSymlink() and plain.getLen() == 5
    linked = fs.getRaw().getFileLinkStatus(Path(str(link)))
    assert linked.isSymlink() and linked.getSymlink().toUri().getPath() == str(target)
    with pytest.raises(Exception, match="FileNotFoundException"):
        fs.getFileLinkStatus(Path(str(tmp_path / "missing")))


def test_a_checkpoint_renames_its_files_into_place(spark_session, tmp_path):
    """Spark's checkpoint file manager (FileContext: create a temp file, rename it over the final name) on it."""
    jvm = spark_session._jvm
    conf = spark_session._jsc.hadoopConfiguration()
    log = jvm.org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.create(
        jvm.org.apache.hadoop.fs.Path(str(tmp_path)), conf)
    assert log.getClass().getSimpleName() == "FileContextBasedCheckpointFileManager"
    out = log.createAtomic(jvm.org.apache.hadoop.fs.Path(str(tmp_path / "0")), False)
    out.write(b"v1")
    out.close()
    assert (tmp_path / "0").read_bytes() == b"v1"
    assert mode(tmp_path / "0") == 0o644   # Hadoop's default file permission less its umask (022)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".0.crc", "0"]   # no temp file left behind

